import MotionModel

/// Shared fixtures for tests: a real mosquitto launcher, a fake IIO sysfs tree, process helpers.
public enum TestSupport {}
