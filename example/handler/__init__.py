"""Lambda asset of the example app (the package marker is excluded from the asset)."""
