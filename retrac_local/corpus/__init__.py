"""The document collection: reading files, chunking, embedding, the LanceDB store, and search."""
