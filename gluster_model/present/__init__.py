"""Presentation: terminal tables, lines and progress for the CLI; the library returns results, this draws them."""
