"""The repository as a whole: import rules, packaging, deployment files, the docs site."""
