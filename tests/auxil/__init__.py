"""Test helpers: fakes, factories and loopback stand-ins shared by the test modules."""
