# SPDX-License-Identifier: Apache-2.0

''' Common imports and names for the MCP subpackage. '''

# ruff: noqa: F403


from ..__ import *
