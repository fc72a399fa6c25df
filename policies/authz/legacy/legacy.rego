# METADATA
# description: |
#   The legacy dashboard ACL fallback (LEGACY_ACL_ENABLED): an entry on a candidate scope of a
#   dashboard or folder, for the subject's user, one of its teams or its org role, allows what its
#   level allows: 1 View reads, 2 Edit also writes, creates and deletes, 4 Admin also manages
#   permissions.
package authz.legacy

import data.authz.subject

default is_enabled := false

is_enabled if data.settings.legacy_acl_enabled == true

# every ACL entry that allows action on target for the subject, as a reason; scopes are the
# target's candidate scopes. The subject's keys are only worked out once a scope has entries.
grants(action, target, scopes) := {reason |
	is_enabled
	_has_acl(target.kind)
	needed := _level(action)
	some scope in scopes
	entries := data.legacy_acl[scope]
	some principal in subject.principals
	level := entries[principal]
	is_number(level)
	level >= needed
	reason := concat("", ["legacy ACL grants level ", format_int(level, 10), " on ", scope, " to ", principal])
}

_has_acl("dashboards")

_has_acl("folders")

# the level an action needs; functions of constants, not an object, to build nothing per decision
_level("dashboards:read") := 1

_level("folders:read") := 1

_level("dashboards:write") := 2

_level("dashboards:create") := 2

_level("dashboards:delete") := 2

_level("folders:write") := 2

_level("folders:create") := 2

_level("folders:delete") := 2

_level("dashboards.permissions:read") := 4

_level("dashboards.permissions:write") := 4

_level("folders.permissions:read") := 4

_level("folders.permissions:write") := 4
