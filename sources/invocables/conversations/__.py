# SPDX-License-Identifier: Apache-2.0

''' Common imports and names for the conversations subpackage. '''


from ..__ import *

import invocables.canisters as canisters
import invocables.exceptions as exceptions
import invocables.execution as execution
import invocables.processors as processors
