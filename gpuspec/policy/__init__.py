"""Policy packs: rule settings, exceptions and custom declarative rules from policies/."""
