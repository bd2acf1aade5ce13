"""What every agent module declares: its policy kinds and their typed, defaulted parameters."""

from __future__ import annotations

from dataclasses import dataclass

MAX_PARAMS = 10  # width of the parameter row a kernel receives (selfplay._param_row spells it out)
Params = tuple[float, ...]  # one policy's parameter row, as kernels receive it


class AgentError(ValueError):
    """An unknown agent or parameter, or a malformed spec; the message lists what is valid."""


@dataclass(frozen=True)
class Parameter:
    """A tunable knob. ``choices`` names the values of an enumerated parameter (stored as its index)."""

    name: str
    default: float | int
    description: str
    choices: tuple[str, ...] = ()

    def parse(self, text: str, agent: str) -> float | int:
        """The value written ``text`` on a command line or in a spec string."""
        if self.choices:
            if text in self.choices:
                return self.choices.index(text)
            raise AgentError(
                f"{agent}: parameter {self.name}={text!r} must be one of {', '.join(self.choices)}"
            )
        try:
            return int(text) if isinstance(self.default, int) else float(text)
        except ValueError:
            kind = "an integer" if isinstance(self.default, int) else "a number"
            raise AgentError(f"{agent}: parameter {self.name}={text!r} must be {kind}") from None

    def format(self, value: float | int) -> str:
        if self.choices:
            return self.choices[int(value)]
        return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class PolicyKind:
    """A family of policies (``random``, ``rule``, ``mc`` ...) and its tunable parameters."""

    name: str
    code: int
    description: str
    parameters: tuple[Parameter, ...] = ()

    def __post_init__(self) -> None:
        assert len(self.parameters) <= MAX_PARAMS, f"{self.name}: at most {MAX_PARAMS} parameters"

    def parameter(self, name: str) -> Parameter:
        for p in self.parameters:
            if p.name == name:
                return p
        valid = ", ".join(p.name for p in self.parameters) or "none"
        raise AgentError(f"agent {self.name!r} has no parameter {name!r} (valid: {valid})")

    def default_params(self) -> Params:
        """The kernel parameter row of this kind with every default."""
        row = [float(p.default) for p in self.parameters]
        return tuple(row + [0.0] * (MAX_PARAMS - len(row)))
