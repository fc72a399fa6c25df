package authz.scim_test

import data.authz.scim

_user := {"id": "u1", "kind": "user", "server_admin": false, "disabled": false}

_robot := {"id": "sa1", "kind": "service_account", "server_admin": false, "disabled": false}

_refusal(subject, action) := refusal if {
	refusal := scim.refusal with input as {"subject": subject, "org_id": "org_main", "action": action}
}

test_a_person_is_refused_scim_actions if {
	_refusal(_user, "scim:read") == {"kind": "service-account-only", "action": "scim:read"}
	_refusal(_user, "scim:write") == {"kind": "service-account-only", "action": "scim:write"}
}

test_a_server_admin_is_refused_scim_actions_too if {
	_refusal(object.union(_user, {"server_admin": true}), "scim:write")
}

test_a_service_account_is_not_refused if {
	not _refusal(_robot, "scim:write")
}

test_other_actions_are_not_scim_actions if {
	not _refusal(_user, "teams:write")
}

_roles := {
	"basic:admin": {"*": {"*": true}},
	"fixed:scim:provisioner": {"scim:read": {"*": true}, "scim:write": {"*": true}},
}

_members := {
	"u1": {"role": "Admin", "roles": ["fixed:scim:provisioner"], "teams": []},
	"sa1": {"role": "None", "roles": ["fixed:scim:provisioner"], "teams": []},
	"sa2": {"role": "None", "roles": [], "teams": []},
}

# the decision and the permissions of a request in an org of those members and roles
_answers(request) := answers if {
	answers := {"allow": data.authz.allow, "decision": data.authz.decision, "permissions": data.authz.permissions} with input as request
		with data.org_id as "org_main"
		with data.settings as {"legacy_acl_enabled": false}
		with data.members as _members
		with data.teams as {}
		with data.builtin_roles as {"Admin": ["basic:admin"], "None": []}
		with data.roles as _roles
		with data.legacy_acl as {}
}

test_the_provisioner_role_allows_its_service_account if {
	_answers({"subject": _robot, "org_id": "org_main", "action": "scim:write"}).allow
}

test_an_org_admin_holding_the_role_is_denied_with_the_reason if {
	answers := _answers({"subject": _user, "org_id": "org_main", "action": "scim:write"})
	not answers.allow
	{"kind": "service-account-only", "action": "scim:write"} in answers.decision.reasons
}

test_a_service_account_without_the_role_is_denied if {
	robot := object.union(_robot, {"id": "sa2"})
	answers := _answers({"subject": robot, "org_id": "org_main", "action": "scim:read"})
	not answers.allow
	answers.decision.reasons == [{"kind": "missing", "action": "scim:read"}]
}

test_permissions_leave_scim_actions_out_for_a_person if {
	not _answers({"subject": _user, "org_id": "org_main"}).permissions["scim:read"]
	_answers({"subject": _robot, "org_id": "org_main"}).permissions["scim:read"] == {"*"}
}
