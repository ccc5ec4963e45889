"""The stepper's twenty steps: forward through nodes 1..10, then backward from 10 to 1."""

from __future__ import annotations

from dataclasses import dataclass

from ln_core.forward import NODE_NAMES

N_NODES = len(NODE_NAMES)
N_STEPS = 2 * N_NODES


@dataclass(frozen=True)
class Step:
    """Step `number` (1..20) computes node `node` (1-based `index`) forward or its gradient."""

    number: int
    backward: bool
    index: int

    @property
    def node(self) -> str:
        return NODE_NAMES[self.index - 1]

    @property
    def checked(self) -> tuple[str, ...]:
        """The nodes whose gradient this step checks numerically: at sample_mean, dx is
        complete too, so x is checked with it."""
        return (self.node, "x") if self.node == "sample_mean" else (self.node,)

    @property
    def label(self) -> str:
        if self.backward:
            return f"{self.number}. backward: d{self.node}" + (" and dx" if self.index == 1 else "")
        return f"{self.number}. forward: {self.node}"

    def status(self, node: str) -> str:
        """'pending', 'forward' (value known) or 'gradient' (gradient known) at this step."""
        position = NODE_NAMES.index(node) + 1
        if not self.backward:
            return "forward" if position <= self.index else "pending"
        return "gradient" if position >= self.index else "forward"


def step(number: int) -> Step:
    """Step 1..10 computes node 1..10; step 11..20 computes the gradient of node 10..1."""
    if not 1 <= number <= N_STEPS:
        raise ValueError(f"Steps run from 1 to {N_STEPS}, got {number}.")
    if number <= N_NODES:
        return Step(number, backward=False, index=number)
    return Step(number, backward=True, index=N_STEPS + 1 - number)
