"""A user's own vLLM endpoint as the kit records it (harness.model.endpoint): against the REAL vLLM 0.32.0 CPU twin
(the session's server), GET /version and the served model's entry of GET /v1/models, typed (ServerInfo,
ServedModel), as `harness run` and the external launcher write them into a run manifest."""

from __future__ import annotations

import pytest

from harness.model.endpoint import ExternalLauncher, endpoint_info
from harness.model.preflight import listed_models
from harness.model.server_info import ServerInfo
from harness.model.vllm.cpu import model_dir


@pytest.mark.vllm
def test_a_running_vllm_says_its_version_and_the_weights_it_serves(vllm_cpu_server):
    entries = listed_models(vllm_cpu_server.base_url)
    info = endpoint_info(vllm_cpu_server.base_url, vllm_cpu_server.model_id, "plain", entries)
    assert info.server == "vLLM" and info.server_version == "0.32.0"  # its own answer, whatever the profile
    m = info.served_model
    assert m.id == vllm_cpu_server.model_id and m.owned_by == "vllm" and m.max_model_len == 8192
    assert m.root == str(model_dir())  # the weights it loaded
    assert ServerInfo.from_json(info.to_json()) == info  # what a manifest stores, typed
    # the external launcher (harness reproduce --launcher external) records the same once ready
    ext = ExternalLauncher(base_url=vllm_cpu_server.base_url, model_id=vllm_cpu_server.model_id, server_profile="vllm")
    assert ext.describe().server_version is None  # before: only where it is
    ext.wait_ready(timeout=30)
    assert ext.describe().server_version == "0.32.0" and ext.describe().served_model.root == m.root
