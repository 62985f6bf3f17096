"""The Re-TRAC loop: rounds of tool use, compression into a structured state, convergence, answer."""
