# SPDX-License-Identifier: Apache-2.0

''' Common imports and names for the command-line subpackage. '''


from ..__ import *
