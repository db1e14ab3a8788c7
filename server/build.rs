//! Compiles the Envoy RLS protos with protox (pure Rust: no protoc, no network) and hands the
//! descriptors to tonic's code generator.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protos = ["proto/envoy/service/ratelimit/v3/rls.proto"];
    println!("cargo:rerun-if-changed=proto");
    let descriptors = protox::compile(protos, ["proto"])?;
    // Kept for the test that checks these numbers against the Envoy binary's own.
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("rls_descriptor_set.bin"),
        prost::Message::encode_to_vec(&descriptors),
    )?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        // Malformed messages are INVALID_ARGUMENT (see src/codec.rs).
        .codec_path("crate::codec::RlsCodec")
        .compile_fds(descriptors)?;
    Ok(())
}
