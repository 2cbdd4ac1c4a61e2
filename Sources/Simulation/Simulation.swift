import AgentCore
import MotionModel

/// The simulated IMU: physically grounded scenarios with ground truth.
public enum Simulation {}
