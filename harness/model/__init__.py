"""Stage: the model side - the OpenAI-compatible client and the server launchers (llama.cpp for the CPU demo, vLLM for the paper runs)."""
