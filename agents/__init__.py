"""Policies that sit in a seat: each agent is a pass policy plus a play policy (see ``registry``)."""

from agents.registry import AgentError, AgentSpec, parse_agent

__all__ = ["AgentError", "AgentSpec", "parse_agent"]
