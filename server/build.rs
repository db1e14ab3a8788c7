//! Compiles the Envoy RLS protos with protox (pure Rust: no protoc, no network) and hands the
//! descriptors to tonic's code generator.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protos = ["proto/envoy/service/ratelimit/v3/rls.proto"];
    println!("cargo:rerun-if-changed=proto");
    let descriptors = protox::compile(protos, ["proto"])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        // Malformed messages are INVALID_ARGUMENT (see src/codec.rs).
        .codec_path("crate::codec::RlsCodec")
        .compile_fds(descriptors)?;
    Ok(())
}
