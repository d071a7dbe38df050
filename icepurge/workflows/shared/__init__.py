"""What the table and the namespace purge share: how a purge starts, runs a step, streams its
events and answers its controls; the upgrade patch ids; details; the doctor's echo."""
