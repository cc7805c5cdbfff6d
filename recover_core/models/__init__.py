"""Every model by name (Bundles), where its files come from, and the loaders this project writes itself."""
