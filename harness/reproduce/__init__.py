"""Stage: the paper-reproduction pipeline - config, plan and the pipeline that serves, runs and analyses every model."""
