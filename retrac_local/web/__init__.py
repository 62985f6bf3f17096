"""`retrac serve`: a local web page to ask, watch a run, read its report and manage the collection."""
