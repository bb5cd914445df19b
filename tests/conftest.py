pytest_plugins = ["reconciler.testing.pytest_plugin"]
