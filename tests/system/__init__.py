"""The promises across every part: crashes, faults, chaos, parity, scale."""
