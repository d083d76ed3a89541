"""The fleet at git revisions: files read from git objects, a fleet loaded from them, a base and the
working tree compared."""
