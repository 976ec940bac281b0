# SPDX-License-Identifier: Apache-2.0

''' Common imports, under short aliases, for the whole package. '''


import asyncio
import collections
import collections.abc as cabc
import contextlib as ctxl
import dataclasses as dcls
import enum
import functools as funct
import hashlib
import inspect
import json
import logging
import math
import re
import sys
import time
import types

from pathlib import Path

import dynadoc as ddoc
import frigid as immut
import typing_extensions as typx

from absence import Absential, absent, is_absent


__all__ = (
    'Absential',
    'Path',
    'absent',
    'asyncio',
    'cabc',
    'collections',
    'ctxl',
    'dcls',
    'ddoc',
    'enum',
    'funct',
    'hashlib',
    'immut',
    'inspect',
    'is_absent',
    'json',
    'logging',
    'math',
    're',
    'sys',
    'time',
    'types',
    'typx',
)
