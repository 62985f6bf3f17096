"""The code rules of the answering layer, as one catalogue: each can be switched off
(`rules.disabled`), and each run records which fired and what each changed."""
