"""What deploy/kubernetes must say beyond being valid Kubernetes (test-kubernetes.sh runs the
schema check): two replicas, readiness and liveness on /healthcheck, resources, a non-root
user and a read-only root filesystem, the config from the ConfigMap at the image's
SLUICEGATE_CONFIG, Redis's URL from the Secret, a Service with gRPC, HTTP and metrics ports,
and deploy/envoy/ratelimit.yaml's rate limit cluster pointing at that Service's gRPC port.
Writes the ConfigMap's files to the folder given, for the server's --validate.
Usage: python k8s-check.py DEPLOY_DIR CONFIG_OUT_DIR"""

import pathlib
import sys

import yaml

deploy = pathlib.Path(sys.argv[1])
config_out = pathlib.Path(sys.argv[2])
kube = deploy / "kubernetes"


def load(name):
    return yaml.safe_load((kube / name).read_text())


def check(condition, message):
    if not condition:
        sys.exit(f"k8s-check: {message}")
    print(f"ok: {message}")


kustomization = load("kustomization.yaml")
listed = sorted(kustomization["resources"])
present = sorted(p.name for p in kube.glob("*.yaml") if p.name != "kustomization.yaml")
check(listed == present, f"kustomization.yaml lists every manifest: {', '.join(listed)}")

deployment = load("deployment.yaml")
spec = deployment["spec"]
pod = spec["template"]["spec"]
(container,) = pod["containers"]
check(spec["replicas"] == 2, "the Deployment runs 2 replicas")
for probe in ("readinessProbe", "livenessProbe"):
    get = container[probe]["httpGet"]
    check(get["path"] == "/healthcheck" and get["port"] == "http", f"{probe} is GET /healthcheck on http")
check(container["resources"]["requests"].get("cpu") and container["resources"]["limits"].get("memory"),
      "the container has CPU requests and a memory limit")
check(pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 65532,
      "the pod runs as non-root user 65532")
security = container["securityContext"]
check(security["readOnlyRootFilesystem"] is True and security["allowPrivilegeEscalation"] is False,
      "the root filesystem is read-only, no privilege escalation")
env = {e["name"]: e for e in container["env"]}
check(env["SLUICEGATE_REDIS"]["valueFrom"]["secretKeyRef"] == {"name": "sluicegate-redis", "key": "url"},
      "SLUICEGATE_REDIS comes from the Secret sluicegate-redis, key url")
secret = load("secret.yaml")
check(secret["metadata"]["name"] == "sluicegate-redis" and "url" in secret["stringData"], "the Secret holds url")
mount = {m["name"]: m for m in container["volumeMounts"]}["config"]
volume = {v["name"]: v for v in pod["volumes"]}["config"]
configmap = load("configmap.yaml")
check(mount["mountPath"] == env["SLUICEGATE_CONFIG"]["value"] == "/etc/sluicegate"
      and volume["configMap"]["name"] == configmap["metadata"]["name"],
      "the ConfigMap is mounted at SLUICEGATE_CONFIG, /etc/sluicegate")
ports = {p["name"]: p["containerPort"] for p in container["ports"]}
check(ports == {"grpc": 8081, "http": 8080}, "the container names its gRPC (8081) and HTTP (8080) ports")

service = load("service.yaml")
service_ports = {p["name"]: p for p in service["spec"]["ports"]}
check(set(service_ports) == {"grpc", "http", "metrics"}, "the Service exposes grpc, http and metrics")
check(service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"],
      "the Service selects the Deployment's pods")

envoy = yaml.safe_load((deploy / "envoy" / "ratelimit.yaml").read_text())
clusters = {c["name"]: c for c in envoy["static_resources"]["clusters"]}
address = clusters["ratelimit"]["load_assignment"]["endpoints"][0]["lb_endpoints"][0]["endpoint"]["address"]
socket = address["socket_address"]
check(socket["address"].startswith(service["metadata"]["name"] + ".")
      and socket["port_value"] == service_ports["grpc"]["port"],
      f"Envoy's ratelimit cluster points at the Service's gRPC port ({socket['address']}:{socket['port_value']})")

config_out.mkdir(parents=True, exist_ok=True)
for name, text in configmap["data"].items():
    (config_out / name).write_text(text)
print(f"ok: wrote the ConfigMap's {', '.join(configmap['data'])} to {config_out}")
