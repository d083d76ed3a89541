"""Reporters turn findings into text for people and machines; they never know about rules."""
