import AppKernelCore
import Foundation

/// The embedded org's object types, and what describe and describeGlobal say of them.
extension EmbeddedOrg {
    /// A field of an object type.
    struct FieldInfo: Sendable {
        var name: String
        var label: String
        /// Salesforce's field type: `id`, `string`, `email`, `reference`, `picklist`, `boolean`, `datetime`.
        var type: String
        var length = 0
        var nillable = true
        var createable = true
        var updateable = true
        /// For a lookup: the parent type, its relationship name (`Account`), and the child
        /// relationship the parent sees (`Contacts`).
        var referenceTo: String?
        var relationshipName: String?
        var childRelationshipName: String?
        var externalId = false
        var nameField = false
        var picklistValues: [String] = []

        /// Whether a query's search term looks in this field, for a SOSL scope.
        func isSearched(in scope: SOSLSearch.Scope) -> Bool {
            switch scope {
            case .all: ["string", "email", "picklist", "textarea", "phone"].contains(type)
            case .name: nameField || name == "FirstName" || name == "LastName"
            case .email: type == "email"
            case .phone: type == "phone"
            }
        }
    }

    /// An object type.
    struct ObjectInfo: Sendable {
        var name: String
        var label: String
        var labelPlural: String
        var keyPrefix: String
        var fields: [FieldInfo]

        /// The field named `name`, ignoring case (Salesforce's names are case-insensitive).
        func field(_ name: String) -> FieldInfo? {
            fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        }

        /// The lookup whose relationship is named `name` (`Account` for `AccountId`), ignoring case.
        func lookup(_ relationship: String) -> FieldInfo? {
            fields.first { $0.relationshipName?.caseInsensitiveCompare(relationship) == .orderedSame }
        }

        /// The child relationships: every lookup of another type that points here.
        var childRelationships: [(childSObject: String, field: String, relationshipName: String)] {
            EmbeddedOrg.objects.flatMap { child in
                child.fields.compactMap { field in
                    guard field.referenceTo == name, let relationship = field.childRelationshipName else { return nil }
                    return (child.name, field.name, relationship)
                }
            }
        }

        /// The child relationship named `name`, ignoring case.
        func childRelationship(_ relationship: String) -> (childSObject: String, field: String, relationshipName: String)? {
            childRelationships.first { $0.relationshipName.caseInsensitiveCompare(relationship) == .orderedSame }
        }
    }

    private static func id(_ label: String) -> FieldInfo {
        FieldInfo(name: "Id", label: label, type: "id", length: 18, nillable: false, createable: false, updateable: false)
    }

    private static let isDeleted = FieldInfo(name: "IsDeleted", label: "Deleted", type: "boolean", nillable: false, createable: false, updateable: false)

    /// The audit fields every record has, stamped by the org on each write (never writable).
    private static let auditFields: [FieldInfo] = [
        FieldInfo(name: "CreatedDate", label: "Created Date", type: "datetime", nillable: false, createable: false, updateable: false),
        FieldInfo(name: "LastModifiedDate", label: "Last Modified Date", type: "datetime", nillable: false, createable: false, updateable: false),
        FieldInfo(name: "SystemModstamp", label: "System Modstamp", type: "datetime", nillable: false, createable: false, updateable: false),
    ]

    private static func externalID(_ label: String) -> FieldInfo {
        FieldInfo(name: "External_Id__c", label: label, type: "string", length: 255, externalId: true)
    }

    private static func lookup(_ name: String, _ label: String, to parent: String, child: String) -> FieldInfo {
        FieldInfo(name: name, label: label, type: "reference", length: 18, referenceTo: parent,
                  relationshipName: String(name.dropLast(2)), childRelationshipName: child)
    }

    /// The object types, in describeGlobal's order.
    static let objects: [ObjectInfo] = [
        ObjectInfo(name: "Account", label: "Account", labelPlural: "Accounts", keyPrefix: "001", fields: [
            id("Account ID"), isDeleted,
            FieldInfo(name: "Name", label: "Account Name", type: "string", length: 255, nillable: false, nameField: true),
            FieldInfo(name: "Industry", label: "Industry", type: "picklist", length: 255,
                      picklistValues: ["Energy", "Manufacturing", "Research", "Software"]),
            externalID("Account External ID"),
        ] + auditFields),
        ObjectInfo(name: "Case", label: "Case", labelPlural: "Cases", keyPrefix: "500", fields: [
            id("Case ID"), isDeleted,
            lookup("ContactId", "Contact ID", to: "Contact", child: "Cases"),
            lookup("AccountId", "Account ID", to: "Account", child: "Cases"),
            FieldInfo(name: "Subject", label: "Subject", type: "string", length: 255),
            FieldInfo(name: "Status", label: "Status", type: "picklist", length: 255, picklistValues: ["New", "Working", "Closed"]),
        ] + auditFields),
        ObjectInfo(name: "Contact", label: "Contact", labelPlural: "Contacts", keyPrefix: "003", fields: [
            id("Contact ID"), isDeleted,
            lookup("AccountId", "Account ID", to: "Account", child: "Contacts"),
            FieldInfo(name: "LastName", label: "Last Name", type: "string", length: 80, nillable: false),
            FieldInfo(name: "FirstName", label: "First Name", type: "string", length: 40),
            FieldInfo(name: "Name", label: "Full Name", type: "string", length: 121, nillable: false, createable: false, updateable: false,
                      nameField: true),
            FieldInfo(name: "Title", label: "Title", type: "string", length: 128),
            FieldInfo(name: "Email", label: "Email", type: "email", length: 80),
            externalID("Contact External ID"),
        ] + auditFields),
    ]

    /// The object type named `name`, ignoring case.
    static func object(_ name: String) -> ObjectInfo? {
        objects.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    // MARK: Describe

    /// The keys describeGlobal gives each object (describe gives them too).
    static func globalDescribe(_ object: ObjectInfo, version: String) -> [String: JSONValue] {
        let path = "/services/data/\(version)/sobjects/\(object.name)"
        var entry: [String: JSONValue] = [
            "name": .string(object.name), "label": .string(object.label), "labelPlural": .string(object.labelPlural),
            "keyPrefix": .string(object.keyPrefix), "custom": false, "customSetting": false,
            "urls": ["sobject": .string(path), "describe": .string(path + "/describe"), "rowTemplate": .string(path + "/{ID}")],
            "associateEntityType": .null, "associateParentEntity": .null,
        ]
        for flag in ["createable", "deletable", "layoutable", "mergeable", "mruEnabled", "queryable", "replicateable", "retrieveable",
                     "searchable", "triggerable", "undeletable", "updateable", "feedEnabled"] {
            entry[flag] = true
        }
        for flag in ["activateable", "deepCloneable", "deprecatedAndHidden", "hasSubtypes", "isInterface", "isSubtype"] {
            entry[flag] = false
        }
        return entry
    }

    /// `GET …/sobjects`: every object's global keys.
    static func describeGlobal(version: String) -> JSONValue {
        ["encoding": "UTF-8", "maxBatchSize": 200, "sobjects": .array(objects.map { .object(globalDescribe($0, version: version)) })]
    }

    /// `GET …/sobjects/<type>/describe`: the global keys, then fields, child relationships,
    /// record types and the URLs of the object's resources.
    func describe(_ object: ObjectInfo, version: String) -> JSONValue {
        var result = Self.globalDescribe(object, version: version)
        let path = "/services/data/\(version)/sobjects/\(object.name)"
        let host = baseURL.absoluteString
        result["urls"] = ["sobject": .string(path), "describe": .string(path + "/describe"), "rowTemplate": .string(path + "/{ID}"),
                          "compactLayouts": .string(path + "/describe/compactLayouts"), "layouts": .string(path + "/describe/layouts"),
                          "approvalLayouts": .string(path + "/describe/approvalLayouts"), "listviews": .string(path + "/listviews"),
                          "quickActions": .string(path + "/quickActions"), "uiDetailTemplate": .string(host + "/{ID}"),
                          "uiEditTemplate": .string(host + "/{ID}/e"), "uiNewRecord": .string(host + "/\(object.keyPrefix)/e")]
        result["fields"] = .array(object.fields.map { .object(Self.describe($0)) })
        result["childRelationships"] = .array(object.childRelationships.map { child in
            ["childSObject": .string(child.childSObject), "field": .string(child.field), "relationshipName": .string(child.relationshipName),
             "cascadeDelete": false, "restrictedDelete": true, "deprecatedAndHidden": false, "junctionIdListNames": [], "junctionReferenceTo": []]
        })
        result["recordTypeInfos"] = [["active": true, "available": true, "defaultRecordTypeMapping": true, "developerName": "Master",
                                      "master": true, "name": "Master", "recordTypeId": "012000000000000AAA",
                                      "urls": ["layout": .string(path + "/describe/layouts/012000000000000AAA")]]]
        result["compactLayoutable"] = true
        result["searchLayoutable"] = true
        result["listviewable"] = .null
        result["lookupLayoutable"] = .null
        result["namedLayoutInfos"] = []
        result["networkScopeFieldName"] = .null
        result["sobjectDescribeOption"] = "FULL"
        result["actionOverrides"] = []
        result["supportedScopes"] = [["label": .string("All \(object.labelPlural.lowercased())"), "name": "everything"]]
        for key in ["defaultImplementation", "extendedBy", "extendsInterfaces", "implementedBy", "implementsInterfaces"] {
            result[key] = .null
        }
        return .object(result)
    }

    /// A field as describe gives it: every key a real field object has.
    private static func describe(_ field: FieldInfo) -> [String: JSONValue] {
        let soapTypes = ["id": "tns:ID", "reference": "tns:ID", "boolean": "xsd:boolean", "datetime": "xsd:dateTime"]
        var entry: [String: JSONValue] = [
            "name": .string(field.name), "label": .string(field.label), "type": .string(field.type),
            "soapType": .string(soapTypes[field.type] ?? "xsd:string"), "length": .int(field.length),
            "byteLength": .int(field.length * (field.type == "id" || field.type == "reference" ? 1 : 3)),
            "nillable": .bool(field.nillable), "createable": .bool(field.createable), "updateable": .bool(field.updateable),
            "externalId": .bool(field.externalId), "idLookup": .bool(field.name == "Id" || field.externalId || field.nameField && field.name == "Name"),
            "nameField": .bool(field.nameField), "custom": .bool(field.name.hasSuffix("__c")),
            "defaultedOnCreate": .bool(field.type == "id" || field.type == "boolean" || field.type == "datetime"),
            "referenceTo": .array(field.referenceTo.map { [.string($0)] } ?? []),
            "relationshipName": field.relationshipName.map(JSONValue.string) ?? .null,
            "picklistValues": .array(field.picklistValues.map { value in
                ["active": true, "defaultValue": false, "label": .string(value), "validFor": .null, "value": .string(value)]
            }),
            "restrictedPicklist": .bool(!field.picklistValues.isEmpty),
            "filterable": true, "sortable": true, "groupable": .bool(field.type != "id"), "aggregatable": true,
        ]
        for key in ["precision", "scale", "digits"] { entry[key] = 0 }
        for key in ["unique", "calculated", "autoNumber", "caseSensitive", "namePointing", "polymorphicForeignKey", "cascadeDelete",
                    "restrictedDelete", "dependentPicklist", "htmlFormatted", "encrypted", "deprecatedAndHidden", "permissionable",
                    "writeRequiresMasterRead", "highScaleNumber", "queryByDistance", "displayLocationInDecimal", "searchPrefilterable",
                    "formulaTreatNullNumberAsZero", "aiPredictionField"] {
            entry[key] = false
        }
        entry["restrictedDelete"] = .bool(field.type == "reference")   // the org refuses to delete a parent that has children
        for key in ["calculatedFormula", "relationshipOrder", "referenceTargetField", "controllerName", "defaultValue", "defaultValueFormula",
                    "inlineHelpText", "mask", "maskType", "extraTypeInfo", "compoundFieldName", "filteredLookupInfo"] {
            entry[key] = .null
        }
        return entry
    }
}
