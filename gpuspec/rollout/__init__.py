"""The rollout model: what a change of the fleet does to which nodes, under which policy."""
