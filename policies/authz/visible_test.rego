package authz_test

import data.authz

# org, user and dashboard come from decision_test.rego
_visible(req) := answer if {
	answer := authz.visible with input as req
		with data.org_id as org.org_id
		with data.settings as org.settings
		with data.members as org.members
		with data.teams as org.teams
		with data.builtin_roles as org.builtin_roles
		with data.roles as org.roles
		with data.folders as org.folders
		with data.dashboards as org.dashboards
		with data.legacy_acl as org.legacy_acl
}

_listing(subject, action, kind) := {"subject": subject, "org_id": "org_main", "action": action, "kind": kind}

_none := {"all": false, "folders": set(), "items": set()}

test_visible_is_all_for_a_wildcard_every_item_inherits if {
	_visible(_listing(user("u_viewer"), "dashboards:read", "dashboards")) == {"all": true, "folders": set(), "items": set()}
	_visible(_listing(user("u_admin"), "folders:write", "folders")) == {"all": true, "folders": set(), "items": set()}
}

test_visible_lists_the_granted_folders_and_direct_grants if {
	_visible(_listing(user("u_ops"), "dashboards:write", "dashboards")) == {
		"all": false,
		"folders": {"f_team"},
		"items": {"d_root"},
	}
}

test_visible_folders_of_folders_include_the_legacy_acl if {
	_visible(_listing(user("u_none"), "folders:read", "folders")) == {
		"all": false,
		"folders": {"f_root", "f_team"},
		"items": {"f_root", "f_team"},
	}
}

test_visible_legacy_dashboard_entries_are_items if {
	_visible(_listing(user("u_none"), "dashboards:read", "dashboards")) == {
		"all": false,
		"folders": {"f_root", "f_team"},
		"items": {"d_root"},
	}
}

# a permission stored as false grants nothing
test_visible_grants_nothing_by_a_permission_stored_as_false if {
	_visible(_listing(user("u_ops"), "dashboards:delete", "dashboards")) == _none
}

test_visible_is_empty_for_a_refused_action_or_no_action if {
	_visible(_listing(user("u_admin"), "orgs:create", "dashboards")) == _none
	_visible(_listing(user("u_admin"), "", "dashboards")) == _none
}

test_visible_is_undefined_for_other_kinds if {
	not _visible(_listing(user("u_admin"), "alert.rules:read", "alert.rules"))
}

# the sets answer exactly what filter answers item by item, for every member, several actions
# and both kinds
test_visible_equals_filter if {
	every id, _ in org.members {
		every action in ["dashboards:read", "dashboards:write", "dashboards.permissions:write", "folders:read", "folders:delete"] {
			_lists_what_filter_allows(user(id), action, "dashboards", object.keys(org.dashboards))
			_lists_what_filter_allows(user(id), action, "folders", object.keys(org.folders))
		}
	}
}

_lists_what_filter_allows(subject, action, kind, uids) if {
	items := [{"kind": kind, "uid": uid} | some uid in uids]
	allowed := {items[index].uid | some index in _filter(_batch(subject, action, items))}
	answer := _visible(_listing(subject, action, kind))
	listed := {uid | some uid in uids; _is_listed(answer, kind, uid)}
	allowed == listed
}

_is_listed(answer, _, _) if answer.all

# in or under a listed folder: a listed folder's scope is in the item's folder chain
_is_listed(answer, "dashboards", uid) if _under_listed(answer, org.dashboards[uid].folder)

_is_listed(answer, "folders", uid) if _under_listed(answer, uid)

_under_listed(answer, folder) if {
	some scope in org.folders[folder].scopes
	some listed in answer.folders
	scope == concat("", ["folders:uid:", listed])
}

_is_listed(answer, _, uid) if uid in answer.items
