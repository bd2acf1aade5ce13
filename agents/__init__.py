"""Policies that sit in a seat: each agent is a pass policy plus a play policy (see ``registry``)."""

from agents.api import Agent, load
from agents.registry import AgentError, AgentSpec, parse_agent

__all__ = ["Agent", "AgentError", "AgentSpec", "load", "parse_agent"]
