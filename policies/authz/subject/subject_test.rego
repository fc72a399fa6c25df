package authz.subject_test

import data.authz.subject

_members := {
	"u_viewer": {"role": "Viewer", "teams": ["t_ops", "t_empty"], "roles": ["custom:reporter"]},
	"u_none": {"role": "None", "teams": [], "roles": []},
	"u_root": {"role": "None", "teams": [], "roles": []},
	"sa_bot": {"role": "Editor", "teams": [], "roles": []},
}

_builtin_roles := {
	"None": [],
	"Viewer": ["basic:viewer"],
	"Editor": ["basic:viewer", "basic:editor"],
}

_teams := {
	"t_ops": {"roles": ["managed:teams:t_ops:permissions"]},
	"t_empty": {"roles": []},
}

_user(id) := {"id": id, "kind": "user", "server_admin": false, "disabled": false}

_server_admin(id) := object.union(_user(id), {"server_admin": true})

_in_org(subject) := {"subject": subject, "org_id": "org_main"}

_server_level(subject) := {"subject": subject, "org_id": null}

# the subject's roles as a set, its problems and whether it may act, for an input
_eval(request) := {"roles": {role | some role in roles}, "problems": problems, "active": active} if {
	roles := subject.roles with input as request
		with data.org_id as "org_main"
		with data.members as _members
		with data.builtin_roles as _builtin_roles
		with data.teams as _teams
	problems := subject.problems with input as request
		with data.org_id as "org_main"
		with data.members as _members
	active := subject.is_active with input as request
		with data.org_id as "org_main"
		with data.members as _members
}

_inactive(problems) := {"roles": set(), "problems": problems, "active": false}

test_roles_are_direct_builtin_and_team_roles if {
	_eval(_in_org(_user("u_viewer"))) == {
		"roles": {"custom:reporter", "basic:viewer", "managed:teams:t_ops:permissions"},
		"problems": set(),
		"active": true,
	}
}

test_member_with_org_role_none_is_active_without_roles if {
	_eval(_in_org(_user("u_none"))) == {"roles": set(), "problems": set(), "active": true}
}

test_service_account_member_gets_its_org_role if {
	_eval(_in_org({"id": "sa_bot", "kind": "service_account", "disabled": false})).roles == {"basic:viewer", "basic:editor"}
}

test_server_admin_member_also_gets_basic_server_admin if {
	_eval(_in_org(_server_admin("u_root"))).roles == {"basic:server_admin"}
}

test_server_admin_flag_of_a_service_account_is_ignored if {
	request := _in_org({"id": "sa_bot", "kind": "service_account", "server_admin": true, "disabled": false})
	not "basic:server_admin" in _eval(request).roles
}

test_server_admin_who_is_not_a_member_is_denied if {
	_eval(_in_org(_server_admin("u_stranger"))) == _inactive({{"kind": "org", "problem": "not-member", "org": "org_main"}})
}

test_non_member_is_denied if {
	_eval(_in_org(_user("u_stranger"))) == _inactive({{"kind": "org", "problem": "not-member", "org": "org_main"}})
}

test_disabled_member_is_denied if {
	disabled := object.union(_user("u_viewer"), {"disabled": true})
	_eval(_in_org(disabled)) == _inactive({{"kind": "subject", "problem": "disabled"}})
}

test_disabled_server_admin_is_denied_outside_an_org if {
	disabled := object.union(_server_admin("u_root"), {"disabled": true})
	_eval(_server_level(disabled)) == _inactive({{"kind": "subject", "problem": "disabled"}})
}

test_anonymous_is_denied if {
	_eval(_in_org({"kind": "anonymous"})) == _inactive({{"kind": "subject", "problem": "anonymous"}})
}

test_missing_subject_is_denied if {
	_eval({"org_id": "org_main"}) == _inactive({{"kind": "subject", "problem": "missing"}})
}

test_subject_without_id_kind_or_disabled_flag_is_denied if {
	_eval(_in_org({"server_admin": true})) == _inactive({
		{"kind": "subject", "problem": "no-id"},
		{"kind": "subject", "problem": "no-kind"},
		{"kind": "subject", "problem": "disabled-not-boolean"},
	})
}

test_unknown_subject_kind_is_denied if {
	_eval(_in_org({"id": "u_viewer", "kind": "robot", "disabled": false})) == _inactive({{"kind": "subject", "problem": "unknown-kind", "subjectKind": "robot"}})
}

test_server_admin_acts_outside_an_org_through_basic_server_admin if {
	_eval(_server_level(_server_admin("u_root"))) == {"roles": {"basic:server_admin"}, "problems": set(), "active": true}
}

test_server_admin_needs_no_membership_outside_an_org if {
	_eval(_server_level(_server_admin("u_stranger"))).active
}

test_only_a_server_admin_acts_outside_an_org if {
	_eval(_server_level(_user("u_viewer"))) == _inactive({{"kind": "org", "problem": "server-level"}})
}

test_missing_org_id_is_denied if {
	_eval({"subject": _server_admin("u_root")}) == _inactive({{"kind": "org", "problem": "no-org-id"}})
}

test_data_of_another_org_is_denied if {
	request := {"subject": _user("u_viewer"), "org_id": "org_other"}
	_eval(request) == _inactive({{"kind": "org", "problem": "other-document", "org": "org_other"}})
}

test_principals_are_user_teams_and_org_role if {
	principals := subject.principals with input as _in_org(_user("u_viewer"))
		with data.org_id as "org_main"
		with data.members as _members
	principals == {"user:u_viewer", "team:t_ops", "team:t_empty", "role:Viewer"}
}

test_non_member_has_no_principals if {
	principals := subject.principals with input as _in_org(_user("u_stranger"))
		with data.org_id as "org_main"
		with data.members as _members
	principals == set()
}
