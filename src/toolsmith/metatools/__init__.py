"""The five meta-tools the agent starts with: each module owns one tool and its schema."""
