"""The workflows (icepurge/workflows): their logic, handlers, replay, and purges end to end by kind."""
