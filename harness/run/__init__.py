"""Stage: running arms over a dataset - the runner, the append-only result store and run manifests."""
