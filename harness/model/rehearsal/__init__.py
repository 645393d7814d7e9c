"""The rehearsal's model side: a scripted FAKE OpenAI-compatible server, never a model, and how its output is labelled.

    replies.py   the reply script: (seed, request body, answer key, reply form) -> reply text, in the shapes real
                 models produce; the answer key finds a prompt's case
    server.py    THE fake OpenAI-compatible server of the kit, on aiohttp.web (`harness serve rehearsal`): routes,
                 API-key check, fault injection as middleware, counters; RehearsalServer, ScriptedServer
    sources.py   its reply sources: the rehearsal's script (RehearsalReplies) and a test's script (ScriptedReplies),
                 and the one chat.completion body both build
    labels.py    the synthetic labels (model-id prefix, fingerprint) and the refusal to mix real and synthetic results
    launcher.py  RehearsalLauncher: the server as a subprocess, started and stopped like a model server

The contract with the kit: every chat request names its reply form in a header (harness.model.client
REPLY_FORM_HEADER, from the arms' prompt families); the server answers in that form and labels everything it emits
synthetic. The rehearsal's case set is harness.data.rehearsal_set; its driver (`make rehearse`: the reference run
through the reproduce pipeline, the stages, kill-and-resume, the record comparison) is the bench package
(bench/rehearsal.py, bench/compare.py).
"""
