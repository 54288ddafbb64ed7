"""Models shared by the optimizer workers (CPU and CUDA)."""
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    """Linear, BatchNorm, Linear: parameters and floating-point buffers to average."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.bn = nn.BatchNorm1d(16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.bn(self.fc1(x))))
