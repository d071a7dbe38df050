"""The docs site's build (`make docs`): MkDocs hooks that include the README and BENCHMARKS.md,
carry links to the repository's files into the site, and generate the reference pages from the
code. Not shipped: the wheel holds `icepurge` only."""
