"""The gluster CLI: pure argv builders and parsers, plus volume apply/teardown through an executor."""
