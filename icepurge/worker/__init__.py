"""The worker process: settings, Temporal client and the worker loop."""
