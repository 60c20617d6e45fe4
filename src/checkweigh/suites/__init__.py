"""Suite files and cases files: loading, strict validation and one-line errors."""

import typing as _typing

from .. import _lazy

if _typing.TYPE_CHECKING:
    from ._cases import case_of_line as case_of_line
    from ._cases import count_cases as count_cases
    from ._cases import is_blank as is_blank
    from ._cases import iter_cases as iter_cases
    from ._cases import iter_sourced as iter_sourced
    from ._cases import numbered_lines as numbered_lines
    from ._check_types import BUILTIN_CHECKS as BUILTIN_CHECKS
    from ._check_types import CHECK_TYPES as CHECK_TYPES
    from ._command import CommandSpecError as CommandSpecError
    from ._command import ResolvedCommand as ResolvedCommand
    from ._command import resolve_command as resolve_command
    from ._conversations import check_conversations as check_conversations
    from ._errors import first_error as first_error
    from ._errors import loc_text as loc_text
    from ._http import BODY_REF as BODY_REF
    from ._http import ENV_REF as ENV_REF
    from ._http import ReplySpec as ReplySpec
    from ._http import env_names as env_names
    from ._http import env_url_problem as env_url_problem
    from ._loader import load_suite as load_suite
    from ._schema import BandsSpec as BandsSpec
    from ._schema import CasesSpec as CasesSpec
    from ._schema import ConditionSpec as ConditionSpec
    from ._schema import GateSpec as GateSpec
    from ._schema import OutcomeDefaults as OutcomeDefaults
    from ._schema import OutcomeRuleSpec as OutcomeRuleSpec
    from ._schema import RubricSpec as RubricSpec
    from ._schema import SuiteSpec as SuiteSpec
    from ._schema import WeightSpec as WeightSpec
    from ._source import CasesSource as CasesSource
    from ._source import load_mapping as load_mapping
    from ._suite import Suite as Suite
    from ._targets import TARGET_KINDS as TARGET_KINDS
    from ._targets import TARGETS as TARGETS
    from ._targets import CommandTargetSpec as CommandTargetSpec
    from ._targets import HttpTargetSpec as HttpTargetSpec
    from ._targets import PythonTargetSpec as PythonTargetSpec
    from ._targets import TargetKind as TargetKind
    from ._targets import TargetSpec as TargetSpec
    from ._targets import TargetSpecBase as TargetSpecBase
    from ._text import BOM as BOM
    from ._text import TextFileError as TextFileError
    from ._text import inert as inert
    from ._text import key_text as key_text
    from ._text import read_text as read_text
    from ._text import shown as shown
    from ._unique import UniqueIds as UniqueIds
    from ._unique import id_of_case as id_of_case
    from ._yaml import LineMap as LineMap
    from ._yaml import YamlSyntaxError as YamlSyntaxError
    from ._yaml import load_yaml as load_yaml
    from ._yaml import read_yaml_file as read_yaml_file
else:  # the names load when first read: see checkweigh._lazy
    __getattr__, __dir__ = _lazy.exports(__name__)
