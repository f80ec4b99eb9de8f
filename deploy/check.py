#!/usr/bin/env python3
"""Checks the deployment examples without running them (ctest: deploy_check).

- every YAML file under deploy/ parses (all documents);
- compose.yaml: each service has an image, the build's Dockerfile and every
  bind-mounted file exist, kanon's stop_grace_period exceeds
  shutdown_lame_duck + shutdown_grace + 5 s;
- the kanon.yaml files (compose, ConfigMap) are YAML mappings whose policies
  exist, and the ConfigMap's policies are exactly config/policies/;
- deployment.yaml: probes on /healthz and /readyz, 2 replicas, and
  terminationGracePeriodSeconds covers preStop + shutdown_lame_duck +
  shutdown_grace + 5 s;
- haproxy -c accepts deploy/compose/haproxy.cfg, which checks /readyz;
- the compose init script passes bash -n.

Exits 1 naming every problem. When haproxy is not installed, that check is
skipped (said on stdout) unless CI is set, where it is a failure.
"""
import os
import re
import shutil
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEPLOY = os.path.join(ROOT, "deploy")
COMPOSE = os.path.join(DEPLOY, "compose")
K8S = os.path.join(DEPLOY, "kubernetes")
problems = []


def problem(msg):
    problems.append(msg)


def load_all(path):
    with open(path, encoding="utf-8") as f:
        return list(yaml.safe_load_all(f))


def seconds(text):
    """'30s', '500ms', '2m' (kanon's and compose's durations) in seconds."""
    if str(text).strip() == "0":
        return 0
    m = re.fullmatch(r"(\d+)(ms|s|m|h)", str(text).strip())
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    return int(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def check_yaml_parses():
    for folder, _, files in os.walk(DEPLOY):
        for name in files:
            if name.endswith((".yaml", ".yml")):
                path = os.path.join(folder, name)
                try:
                    load_all(path)
                except yaml.YAMLError as e:
                    problem(f"{os.path.relpath(path, ROOT)}: {e}")


def check_kanon_yaml(config, where, policy_exists):
    if not isinstance(config, dict):
        problem(f"{where}: not a mapping")
        return None
    for key in ("listen", "backend", "metrics", "shutdown_lame_duck", "shutdown_grace",
                "policies"):
        if key not in config:
            problem(f"{where}: no {key}")
    for policy in config.get("policies", []):
        if not policy_exists(policy):
            problem(f"{where}: policy {policy} does not exist")
    # SIGTERM to exit: the lame duck, then the grace.
    return seconds(config.get("shutdown_lame_duck", "0")) + seconds(
        config.get("shutdown_grace", "30s"))


def check_compose():
    path = os.path.join(COMPOSE, "compose.yaml")
    compose = load_all(path)[0]
    services = compose.get("services", {})
    for name in ("postgres", "kanon1", "kanon2", "haproxy"):
        if name not in services:
            problem(f"compose.yaml: no service {name}")
    for name, svc in services.items():
        if "image" not in svc:
            problem(f"compose.yaml: service {name} has no image")
        build = svc.get("build")
        if build:
            dockerfile = os.path.join(COMPOSE, build["context"], build["dockerfile"])
            if not os.path.isfile(dockerfile):
                problem(f"compose.yaml: {name}: no Dockerfile at {dockerfile}")
        for volume in svc.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                if not os.path.exists(os.path.join(COMPOSE, source)):
                    problem(f"compose.yaml: {name} mounts {source}, which does not exist")
    kanon_yaml = os.path.join(COMPOSE, "kanon.yaml")
    mounted = os.path.join(ROOT, "config")  # policies/ is mounted beside kanon.yaml
    grace = check_kanon_yaml(load_all(kanon_yaml)[0], "deploy/compose/kanon.yaml",
                             lambda p: os.path.isfile(os.path.join(mounted, p)))
    for name in ("kanon1", "kanon2"):
        stop = seconds(services.get(name, {}).get("stop_grace_period", "10s"))
        if grace is not None and stop <= grace + 5:
            problem(f"compose.yaml: {name}'s stop_grace_period ({stop} s) must exceed "
                    f"shutdown_lame_duck + shutdown_grace + 5 s ({grace + 5} s)")


def check_kubernetes():
    docs = {}
    for name in os.listdir(K8S):
        if name.endswith(".yaml") and name != "kustomization.yaml":
            for doc in load_all(os.path.join(K8S, name)):
                docs[(doc["kind"], doc["metadata"]["name"])] = doc
    kustomization = load_all(os.path.join(K8S, "kustomization.yaml"))[0]
    for resource in kustomization["resources"]:
        if not os.path.isfile(os.path.join(K8S, resource)):
            problem(f"kustomization.yaml lists {resource}, which does not exist")
    config = docs.get(("ConfigMap", "kanon-config"))
    deployment = docs.get(("Deployment", "kanon"))
    if config is None or deployment is None:
        problem("kubernetes: no ConfigMap kanon-config or no Deployment kanon")
        return
    data = config["data"]
    for name in sorted(os.listdir(os.path.join(ROOT, "config", "policies"))):
        with open(os.path.join(ROOT, "config", "policies", name), encoding="utf-8") as f:
            if data.get(name) != f.read():
                problem(f"configmap.yaml: {name} differs from config/policies/{name}")
    grace = check_kanon_yaml(yaml.safe_load(data["kanon.yaml"]), "configmap.yaml kanon.yaml",
                             lambda p: p in data)
    spec = deployment["spec"]
    if spec.get("replicas") != 2:
        problem("deployment.yaml: replicas is not 2")
    pod = spec["template"]["spec"]
    container = pod["containers"][0]
    if container.get("livenessProbe", {}).get("httpGet", {}).get("path") != "/healthz":
        problem("deployment.yaml: the liveness probe is not GET /healthz")
    if container.get("readinessProbe", {}).get("httpGet", {}).get("path") != "/readyz":
        problem("deployment.yaml: the readiness probe is not GET /readyz")
    pre_stop = 0
    command = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
    if len(command) == 2 and command[0].endswith("sleep"):
        pre_stop = int(command[1])
    period = pod.get("terminationGracePeriodSeconds", 30)
    if grace is not None and period <= pre_stop + grace + 5:
        problem(f"deployment.yaml: terminationGracePeriodSeconds ({period}) must exceed "
                f"preStop ({pre_stop}) + shutdown_lame_duck + shutdown_grace ({grace}) + 5")
    mounts = {m["name"] for m in container.get("volumeMounts", [])}
    if {"config", "tls"} - mounts:
        problem("deployment.yaml: the config and tls volumes are not both mounted")


def check_haproxy():
    cfg = os.path.join(COMPOSE, "haproxy.cfg")
    with open(cfg, encoding="utf-8") as f:
        text = "\n".join(line.split("#")[0] for line in f)
    if "option httpchk GET /readyz" not in text:
        problem("haproxy.cfg: no option httpchk GET /readyz")
    if "shutdown-sessions" in text:
        problem("haproxy.cfg: on-marked-down shutdown-sessions would cut drained sessions")
    exe = shutil.which("haproxy") or ("/usr/sbin/haproxy" if os.access("/usr/sbin/haproxy", os.X_OK)
                                      else None)
    if exe is None:
        if os.environ.get("CI", "") not in ("", "0", "false"):
            problem("haproxy is not installed (scripts/install-deps.sh installs it)")
        else:
            print("deploy_check: haproxy is not installed; haproxy -c skipped")
        return
    r = subprocess.run([exe, "-c", "-f", cfg], capture_output=True, text=True)
    if r.returncode != 0:
        problem(f"haproxy -c rejects haproxy.cfg:\n{r.stdout}{r.stderr}")


def check_scripts():
    script = os.path.join(COMPOSE, "initdb", "10-kanon-demo.sh")
    r = subprocess.run(["bash", "-n", script], capture_output=True, text=True)
    if r.returncode != 0:
        problem(f"{script}: {r.stderr}")
    if not os.access(script, os.X_OK):
        problem(f"{script} is not executable")


def main():
    check_yaml_parses()
    for check in (check_compose, check_kubernetes, check_haproxy, check_scripts):
        try:
            check()
        except (KeyError, TypeError, ValueError, IndexError, OSError, yaml.YAMLError) as e:
            problem(f"{check.__name__}: {type(e).__name__}: {e}")
    for p in problems:
        print("deploy_check: " + p)
    if not problems:
        print("deploy_check: compose, kubernetes and haproxy files are consistent")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
