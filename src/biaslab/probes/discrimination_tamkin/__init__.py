"""DiscriminationTamkin: high-stakes yes/no decisions by gender."""
