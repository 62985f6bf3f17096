"""The `retrac` command line: parse, build settings, call the API, render."""
