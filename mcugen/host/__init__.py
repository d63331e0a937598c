"""Host side: building firmware projects, running them (host process, emulator, board)."""
