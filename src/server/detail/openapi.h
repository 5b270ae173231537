// The OpenAPI 3 description of the REST API, written by hand beside the routes in server.cpp.
#pragma once

#include <string_view>

namespace kj::server::detail {

inline constexpr std::string_view kOpenApiDocument = R"json({
 "openapi": "3.0.3",
 "info": {
  "title": "kerneljudge API",
  "version": "0.1.0",
  "description": "Submit GPU kernels, follow their judging, read rankings. Errors are {\"error\": {\"code\", \"message\"}}."
 },
 "security": [
  {
   "bearer": []
  }
 ],
 "paths": {
  "/api/submissions": {
   "post": {
    "summary": "Submit code to a leaderboard (JSON or multipart with a 'file' part). '#!POPCORN leaderboard X' and '#!POPCORN gpu Y' lines in the code fill leaderboard and gpu when absent.",
    "responses": {
     "201": {
      "description": "Created: the submission (id, status queued)"
     },
     "400": {
      "$ref": "#/components/responses/Error"
     },
     "401": {
      "$ref": "#/components/responses/Error"
     },
     "403": {
      "$ref": "#/components/responses/Error"
     },
     "404": {
      "$ref": "#/components/responses/Error"
     },
     "413": {
      "$ref": "#/components/responses/Error"
     },
     "429": {
      "$ref": "#/components/responses/Error"
     }
    },
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "required": [
         "code"
        ],
        "properties": {
         "leaderboard": {
          "type": "string"
         },
         "gpu": {
          "type": "string"
         },
         "mode": {
          "type": "string",
          "enum": [
           "test",
           "benchmark",
           "leaderboard"
          ]
         },
         "file_name": {
          "type": "string"
         },
         "code": {
          "type": "string"
         }
        }
       }
      },
      "multipart/form-data": {
       "schema": {
        "type": "object",
        "required": [
         "file"
        ],
        "properties": {
         "file": {
          "type": "string",
          "format": "binary"
         },
         "leaderboard": {
          "type": "string"
         },
         "gpu": {
          "type": "string"
         },
         "mode": {
          "type": "string"
         }
        }
       }
      }
     }
    }
   },
   "get": {
    "summary": "The caller's own submissions, newest first (?mine, ?leaderboard=NAME, ?limit=N)",
    "responses": {
     "200": {
      "description": "{submissions: [...]}"
     },
     "401": {
      "$ref": "#/components/responses/Error"
     }
    },
    "parameters": [
     {
      "name": "leaderboard",
      "in": "query",
      "schema": {
       "type": "string"
      }
     },
     {
      "name": "limit",
      "in": "query",
      "schema": {
       "type": "integer"
      }
     }
    ]
   }
  },
  "/api/submissions/{id}": {
   "get": {
    "summary": "Status, verdict, score and runs (result JSON of each public run)",
    "responses": {
     "200": {
      "description": "The submission"
     },
     "401": {
      "$ref": "#/components/responses/Error"
     },
     "403": {
      "$ref": "#/components/responses/Error"
     },
     "404": {
      "$ref": "#/components/responses/Error"
     }
    },
    "parameters": [
     {
      "name": "id",
      "in": "path",
      "required": true,
      "schema": {
       "type": "integer"
      }
     }
    ]
   },
   "delete": {
    "summary": "The owner (or an admin) deletes the submission with its jobs, runs and progress; rankings forget it",
    "responses": {
     "200": {
      "description": "{\"deleted\": id}"
     },
     "401": {
      "$ref": "#/components/responses/Error"
     },
     "403": {
      "$ref": "#/components/responses/Error"
     },
     "404": {
      "$ref": "#/components/responses/Error"
     },
     "409": {
      "$ref": "#/components/responses/Error"
     }
    },
    "parameters": [
     {
      "name": "id",
      "in": "path",
      "required": true,
      "schema": {
       "type": "integer"
      }
     }
    ]
   }
  },
  "/api/submissions/{id}/events": {
   "get": {
    "summary": "Server-Sent Events: 'progress' events (id JOB.SEQ; resume with Last-Event-ID), 'queue' events {position} while the job waits, then one 'result' event with the final submission",
    "responses": {
     "200": {
      "description": "text/event-stream"
     },
     "403": {
      "$ref": "#/components/responses/Error"
     },
     "404": {
      "$ref": "#/components/responses/Error"
     }
    },
    "parameters": [
     {
      "name": "id",
      "in": "path",
      "required": true,
      "schema": {
       "type": "integer"
      }
     },
     {
      "name": "Last-Event-ID",
      "in": "header",
      "schema": {
       "type": "string"
      }
     }
    ]
   }
  },
  "/api/submissions/{id}/code": {
   "get": {
    "summary": "The submitted code: the owner and admins; anyone after the leaderboard's deadline",
    "responses": {
     "200": {
      "description": "text/plain"
     },
     "401": {
      "$ref": "#/components/responses/Error"
     },
     "403": {
      "$ref": "#/components/responses/Error"
     },
     "404": {
      "$ref": "#/components/responses/Error"
     }
    },
    "parameters": [
     {
      "name": "id",
      "in": "path",
      "required": true,
      "schema": {
       "type": "integer"
      }
     }
    ],
    "security": []
   }
  },
  "/api/submissions/{id}/profile": {
   "get": {
    "summary": "Profile mode: the summary (kernels, text) and the stored report's link; the owner and admins",
    "responses": {
     "200": {
      "description": "JSON: submission_id, available, message, kernels, summary, report (name, bytes, url) or null"
     },
     "401": {
      "$ref": "#/components/responses/Error"
     },
     "403": {
      "$ref": "#/components/responses/Error"
     },
     "404": {
      "$ref": "#/components/responses/Error"
     }
    },
    "parameters": [
     {
      "name": "id",
      "in": "path",
      "required": true,
      "schema": {
       "type": "integer"
      }
     }
    ]
   }
  },
  "/api/submissions/{id}/profile/report": {
   "get": {
    "summary": "Profile mode: the stored Nsight Compute report (.ncu-rep); the owner and admins",
    "responses": {
     "200": {
      "description": "application/octet-stream"
     },
     "401": {
      "$ref": "#/components/responses/Error"
     },
     "403": {
      "$ref": "#/components/responses/Error"
     },
     "404": {
      "$ref": "#/components/responses/Error"
     }
    },
    "parameters": [
     {
      "name": "id",
      "in": "path",
      "required": true,
      "schema": {
       "type": "integer"
      }
     }
    ]
   }
  },
  "/api/submissions/{id}/hacked": {
   "post": {
    "summary": "Admin: mark a submission hacked (left out of rankings) or not",
    "responses": {
     "200": {
      "description": "The submission"
     },
     "403": {
      "$ref": "#/components/responses/Error"
     },
     "404": {
      "$ref": "#/components/responses/Error"
     }
    },
    "parameters": [
     {
      "name": "id",
      "in": "path",
      "required": true,
      "schema": {
       "type": "integer"
      }
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "required": [],
        "properties": {
         "hacked": {
          "type": "boolean"
         }
        }
       }
      }
     }
    }
   }
  },
  "/api/leaderboards": {
   "get": {
    "summary": "Leaderboards (hidden ones for admins only)",
    "responses": {
     "200": {
      "description": "{leaderboards: [...]}"
     }
    },
    "security": []
   }
  },
  "/api/leaderboards/{name}": {
   "get": {
    "summary": "Description, deadline, GPU types, templates",
    "responses": {
     "200": {
      "description": "The leaderboard"
     },
     "404": {
      "$ref": "#/components/responses/Error"
     }
    },
    "parameters": [
     {
      "name": "name",
      "in": "path",
      "required": true,
      "schema": {
       "type": "string"
      }
     }
    ],
    "security": []
   }
  },
  "/api/leaderboards/{name}/ranking": {
   "get": {
    "summary": "Each user's best passing ranked score (seconds, lower is better); submissions with a failed secret run or marked hacked are left out",
    "responses": {
     "200": {
      "description": "{leaderboard, gpu, ranking: [{rank, user, submission_id, file_name, score, submitted_at}]}"
     },
     "400": {
      "$ref": "#/components/responses/Error"
     },
     "404": {
      "$ref": "#/components/responses/Error"
     }
    },
    "parameters": [
     {
      "name": "name",
      "in": "path",
      "required": true,
      "schema": {
       "type": "string"
      }
     },
     {
      "name": "gpu",
      "in": "query",
      "required": false,
      "schema": {
       "type": "string"
      },
      "description": "GPU type; optional when the leaderboard has one"
     }
    ],
    "security": []
   }
  },
  "/api/leaderboards/{name}/template": {
   "get": {
    "summary": "The problem's template file (?lang=Python|Triton|CUDA)",
    "responses": {
     "200": {
      "description": "text/plain"
     },
     "404": {
      "$ref": "#/components/responses/Error"
     }
    },
    "parameters": [
     {
      "name": "name",
      "in": "path",
      "required": true,
      "schema": {
       "type": "string"
      }
     },
     {
      "name": "lang",
      "in": "query",
      "schema": {
       "type": "string"
      }
     }
    ],
    "security": []
   }
  },
  "/api/admin/users": {
   "post": {
    "summary": "Admin: create a user; returns its first token (shown once)",
    "responses": {
     "201": {
      "description": "{id, name, admin, token}"
     },
     "400": {
      "$ref": "#/components/responses/Error"
     },
     "403": {
      "$ref": "#/components/responses/Error"
     },
     "409": {
      "$ref": "#/components/responses/Error"
     }
    },
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "required": [
         "name"
        ],
        "properties": {
         "name": {
          "type": "string"
         },
         "admin": {
          "type": "boolean"
         },
         "label": {
          "type": "string"
         }
        }
       }
      }
     }
    }
   }
  },
  "/api/admin/tokens": {
   "post": {
    "summary": "Admin: issue another token for a user",
    "responses": {
     "201": {
      "description": "{user, token_id, token}"
     },
     "400": {
      "$ref": "#/components/responses/Error"
     },
     "403": {
      "$ref": "#/components/responses/Error"
     },
     "404": {
      "$ref": "#/components/responses/Error"
     }
    },
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "required": [
         "user"
        ],
        "properties": {
         "user": {
          "type": "string"
         },
         "label": {
          "type": "string"
         }
        }
       }
      }
     }
    }
   }
  },
  "/api/admin/leaderboards": {
   "post": {
    "summary": "Admin: load a problem directory (on the server) as a leaderboard",
    "responses": {
     "201": {
      "description": "The leaderboard"
     },
     "400": {
      "$ref": "#/components/responses/Error"
     },
     "403": {
      "$ref": "#/components/responses/Error"
     },
     "409": {
      "$ref": "#/components/responses/Error"
     }
    },
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "required": [
         "problem_dir"
        ],
        "properties": {
         "problem_dir": {
          "type": "string"
         },
         "name": {
          "type": "string"
         },
         "description": {
          "type": "string"
         },
         "deadline": {
          "type": "string",
          "format": "date-time",
          "nullable": true
         },
         "gpu_types": {
          "type": "array",
          "items": {
           "type": "string"
          }
         },
         "visibility": {
          "type": "string",
          "enum": [
           "public",
           "hidden"
          ]
         }
        }
       }
      }
     }
    }
   }
  },
  "/api/admin/leaderboards/{name}/deadline": {
   "put": {
    "summary": "Admin: set or clear (null) the deadline",
    "responses": {
     "200": {
      "description": "The leaderboard"
     },
     "400": {
      "$ref": "#/components/responses/Error"
     },
     "403": {
      "$ref": "#/components/responses/Error"
     },
     "404": {
      "$ref": "#/components/responses/Error"
     }
    },
    "parameters": [
     {
      "name": "name",
      "in": "path",
      "required": true,
      "schema": {
       "type": "string"
      }
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "required": [
         "deadline"
        ],
        "properties": {
         "deadline": {
          "type": "string",
          "format": "date-time",
          "nullable": true
         }
        }
       }
      }
     }
    }
   }
  },
  "/api/openapi.json": {
   "get": {
    "summary": "This document",
    "responses": {
     "200": {
      "description": "OpenAPI 3"
     }
    },
    "security": []
   }
  },
  "/metrics": {
   "get": {
    "summary": "Prometheus text: queue depth by GPU type, worker job outcomes, busy workers, job duration histogram",
    "responses": {
     "200": {
      "description": "text/plain"
     }
    },
    "security": []
   }
  }
 },
 "components": {
  "securitySchemes": {
   "bearer": {
    "type": "http",
    "scheme": "bearer",
    "description": "kj_ + 64 hex digits, from an admin"
   }
  },
  "responses": {
   "Error": {
    "description": "400 missing_field/invalid_json/invalid_field/invalid_mode/unknown_gpu/missing_gpu, 401 missing_token/invalid_token, 403 not_yours/deadline_passed/admin_only, 404 unknown_leaderboard/unknown_submission/unknown_user, 409 user_exists/leaderboard_exists, 413 source_too_large/payload_too_large, 429 rate_limited (with Retry-After)",
    "content": {
     "application/json": {
      "schema": {
       "type": "object",
       "properties": {
        "error": {
         "type": "object",
         "properties": {
          "code": {
           "type": "string"
          },
          "message": {
           "type": "string"
          }
         }
        }
       }
      }
     }
    }
   }
  }
 }
}
)json";

}  // namespace kj::server::detail
