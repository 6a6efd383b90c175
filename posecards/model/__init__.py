"""Reading a local model checkpoint: its config and the one tensor a card needs."""
