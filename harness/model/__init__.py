"""Stage: the model side - the OpenAI-compatible client, the server launchers (llama.cpp for the CPU demo,
vLLM for the paper runs) and the rehearsal server (the one scripted fake, for pipeline rehearsals and tests:
rehearsal/)."""
