"""deploy/kubernetes.yaml: every document valid against the Kubernetes API schemas (those that
kubernetes-validate ships: no cluster and no network needed), and what a class relies on
written there: one database for every replica, probes the app answers, a browser kept on one
replica, and a container user that can write what it writes.
"""

from __future__ import annotations

import copy
import socket
import urllib.request
from pathlib import Path, PurePosixPath
from typing import Any

import image_kit
import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "deploy" / "kubernetes.yaml"
DOCUMENTS = [d for d in yaml.safe_load_all(MANIFESTS.read_text()) if d]
DATABASE = "LNLAB_CLASS_DB"  # ui/live/connect.py
PROBES = ("readinessProbe", "livenessProbe", "startupProbe")


def _kind(kind: str) -> list[dict[str, Any]]:
    return [d for d in DOCUMENTS if d["kind"] == kind]


def _pods() -> list[dict[str, Any]]:
    return [d["spec"]["template"] for d in _kind("Deployment")]


def _containers() -> list[dict[str, Any]]:
    return [c for pod in _pods() for c in pod["spec"]["containers"]]


def _port(container: dict[str, Any], port: int | str) -> int:
    """A container's port by its number or its name."""
    if isinstance(port, int):
        return port
    (number,) = [p["containerPort"] for p in container["ports"] if p.get("name") == port]
    return number


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("validation tried the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)


def test_every_document_is_valid_against_the_kubernetes_schemas(offline) -> None:
    version = kubernetes_validate.latest_version()
    assert {d["kind"] for d in DOCUMENTS} == {"Deployment", "Service", "Ingress"}
    for document in DOCUMENTS:
        # strict: a field the API does not have (a typo) is an error, not ignored.
        kubernetes_validate.validate(document, version, strict=True)


@pytest.mark.parametrize(
    "spoil",
    [
        lambda d: d["spec"]["template"]["spec"]["containers"][0].update(readinesProbe={}),
        lambda d: d["spec"].update(replicas="four"),
        lambda d: d["spec"]["template"]["spec"]["securityContext"].update(runAsUser=-1.5),
    ],
    ids=["misspelled field", "wrong type", "not an integer"],
)
def test_the_validation_refuses_a_spoiled_deployment(offline, spoil) -> None:
    spoiled = copy.deepcopy(_kind("Deployment")[0])
    spoil(spoiled)
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(spoiled, kubernetes_validate.latest_version(), strict=True)


def test_every_replica_gets_the_database_url_from_one_secret() -> None:
    (deployment,) = _kind("Deployment")
    assert deployment["spec"]["replicas"] > 1
    secrets = set()
    for container in _containers():
        env = {e["name"]: e for e in container["env"]}
        assert "value" not in env[DATABASE], "the database URL (and its password) in the clear"
        secrets |= {
            e["valueFrom"]["secretKeyRef"]["name"] for e in env.values() if "valueFrom" in e
        }
        assert "secretKeyRef" in env[DATABASE]["valueFrom"]
    assert len(secrets) == 1, secrets


def test_the_probes_ask_what_the_image_answers(served) -> None:
    recipe = served.image.recipe
    probes = [(c, c[p]) for c in _containers() for p in PROBES if p in c]
    assert {"readinessProbe", "livenessProbe"} <= {p for c in _containers() for p in c}
    for container, probe in probes:
        assert _port(container, probe["httpGet"]["port"]) == recipe.port
        url = f"http://127.0.0.1:{served.port}{probe['httpGet']['path']}"
        with urllib.request.urlopen(url, timeout=30) as reply:
            # Any path gets 200 and the app's page (Streamlit routes pages in the browser):
            # only the health route says ok, and only once the server can serve.
            assert reply.status == 200 and reply.read() == b"ok", url
    # The image listens where the probes and the Service look.
    assert f"--server.port={recipe.port}" in recipe.command


def test_the_service_keeps_a_browser_on_one_replica() -> None:
    (service,) = _kind("Service")
    (pod,) = _pods()
    (container,) = pod["spec"]["containers"]
    spec = service["spec"]
    assert spec["sessionAffinity"] == "ClientIP"
    # A lesson long: Kubernetes' default (3 hours) would move a browser mid-afternoon.
    assert spec["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"] >= 8 * 3600
    assert spec["selector"].items() <= pod["metadata"]["labels"].items()
    (port,) = spec["ports"]
    assert _port(container, port["targetPort"]) == image_kit.read().port
    (ingress,) = _kind("Ingress")
    assert ingress["metadata"]["annotations"]["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == service["metadata"]["name"]
    assert backend["port"] in ({"name": port.get("name")}, {"number": port["port"]})


def test_the_container_runs_as_the_image_user_and_can_write_what_it_writes() -> None:
    recipe = image_kit.read()
    (pod,) = _pods()
    (container,) = pod["spec"]["containers"]
    security = pod["spec"]["securityContext"]
    assert security["runAsNonRoot"] and security["runAsUser"] == recipe.uid != 0
    assert security["runAsGroup"] == security["fsGroup"] == recipe.gid
    assert container["securityContext"]["readOnlyRootFilesystem"]
    # Read-only but for its volumes: the store's folder the image gives its user, and /tmp.
    mounts = {PurePosixPath(m["mountPath"]): m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    for folder in [*(f.path for f in recipe.folders), PurePosixPath("/tmp")]:
        assert folder in mounts, f"{folder} is not writable in the pod"
        assert "emptyDir" in volumes[mounts[folder]]
