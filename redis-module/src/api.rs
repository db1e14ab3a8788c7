//! The part of Redis's module API this module calls, fetched by name at load as
//! `RedisModule_Init` (redismodule.h) does: Redis hands the module a context whose first word
//! is `RedisModule_GetApi`, and every other function is asked of it. Written by hand, so the
//! build needs neither Redis's headers nor libclang.

use std::ffi::{c_char, c_int, c_long, c_longlong, c_void, CStr};
use std::sync::OnceLock;

/// Opaque handles.
pub type Ctx = c_void;
pub type RString = c_void;
pub type Key = c_void;

pub const OK: c_int = 0;
pub const READ: c_int = 1;
pub const WRITE: c_int = 2;
pub const KEYTYPE_EMPTY: c_int = 0;
pub const KEYTYPE_STRING: c_int = 1;
/// Keyspace event classes (`notify-keyspace-events`' `g` and `$`).
pub const NOTIFY_GENERIC: c_int = 1 << 2;
pub const NOTIFY_STRING: c_int = 1 << 3;
/// The version of the API `SetModuleAttribs` is told.
pub const APIVER_1: c_int = 1;

pub type CommandFn = unsafe extern "C" fn(*mut Ctx, *mut *mut RString, c_int) -> c_int;

/// The functions, resolved once at load.
pub struct Api {
    pub create_command: unsafe extern "C" fn(
        *mut Ctx,
        *const c_char,
        CommandFn,
        *const c_char,
        c_int,
        c_int,
        c_int,
    ) -> c_int,
    pub set_module_attribs: unsafe extern "C" fn(*mut Ctx, *const c_char, c_int, c_int),
    pub wrong_arity: unsafe extern "C" fn(*mut Ctx) -> c_int,
    pub string_ptr_len: unsafe extern "C" fn(*const RString, *mut usize) -> *const c_char,
    pub open_key: unsafe extern "C" fn(*mut Ctx, *mut RString, c_int) -> *mut Key,
    pub close_key: unsafe extern "C" fn(*mut Key),
    pub key_type: unsafe extern "C" fn(*mut Key) -> c_int,
    pub string_dma: unsafe extern "C" fn(*mut Key, *mut usize, c_int) -> *mut c_char,
    pub string_truncate: unsafe extern "C" fn(*mut Key, usize) -> c_int,
    pub set_expire: unsafe extern "C" fn(*mut Key, c_longlong) -> c_int,
    pub get_abs_expire: unsafe extern "C" fn(*mut Key) -> c_longlong,
    pub reply_with_array: unsafe extern "C" fn(*mut Ctx, c_long) -> c_int,
    pub reply_with_string_buffer: unsafe extern "C" fn(*mut Ctx, *const c_char, usize) -> c_int,
    pub reply_with_error: unsafe extern "C" fn(*mut Ctx, *const c_char) -> c_int,
    pub replicate: unsafe extern "C" fn(*mut Ctx, *const c_char, *const c_char, ...) -> c_int,
    pub notify_keyspace_event:
        unsafe extern "C" fn(*mut Ctx, c_int, *const c_char, *mut RString) -> c_int,
}

static API: OnceLock<Api> = OnceLock::new();

/// The API, once [`load`] has resolved it (always, before Redis runs a command of ours).
pub fn api() -> Option<&'static Api> {
    API.get()
}

/// Resolves every function from the context Redis passed to `RedisModule_OnLoad`; `None`
/// when this Redis lacks one (older than 6.2).
///
/// # Safety
/// `ctx` must be the context of `RedisModule_OnLoad`.
pub unsafe fn load(ctx: *mut Ctx) -> Option<&'static Api> {
    type GetApi = unsafe extern "C" fn(*const c_char, *mut c_void) -> c_int;
    let get_api: GetApi =
        std::mem::transmute::<*const c_void, GetApi>(*(ctx as *const *const c_void));
    unsafe fn get<F>(get_api: GetApi, name: &CStr) -> Option<F> {
        let mut ptr: *mut c_void = std::ptr::null_mut();
        if get_api(name.as_ptr(), (&mut ptr as *mut *mut c_void).cast()) != OK || ptr.is_null() {
            return None;
        }
        Some(std::mem::transmute_copy::<*mut c_void, F>(&ptr))
    }
    let api = Api {
        create_command: get(get_api, c"RedisModule_CreateCommand")?,
        set_module_attribs: get(get_api, c"RedisModule_SetModuleAttribs")?,
        wrong_arity: get(get_api, c"RedisModule_WrongArity")?,
        string_ptr_len: get(get_api, c"RedisModule_StringPtrLen")?,
        open_key: get(get_api, c"RedisModule_OpenKey")?,
        close_key: get(get_api, c"RedisModule_CloseKey")?,
        key_type: get(get_api, c"RedisModule_KeyType")?,
        string_dma: get(get_api, c"RedisModule_StringDMA")?,
        string_truncate: get(get_api, c"RedisModule_StringTruncate")?,
        set_expire: get(get_api, c"RedisModule_SetExpire")?,
        get_abs_expire: get(get_api, c"RedisModule_GetAbsExpire")?,
        reply_with_array: get(get_api, c"RedisModule_ReplyWithArray")?,
        reply_with_string_buffer: get(get_api, c"RedisModule_ReplyWithStringBuffer")?,
        reply_with_error: get(get_api, c"RedisModule_ReplyWithError")?,
        replicate: get(get_api, c"RedisModule_Replicate")?,
        notify_keyspace_event: get(get_api, c"RedisModule_NotifyKeyspaceEvent")?,
    };
    let _ = API.set(api);
    API.get()
}
